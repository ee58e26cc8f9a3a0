/* Regression (time): csmith seed 3 took minutes in the dependence pass: every possibly aliasing pair of
 * references blocked the loops around it through a list membership test (quadratic in the number of
 * reasons: 75,000 calls for one csmith nest).  This nest has 60 pointer parameters that may alias each
 * other: 1770 pairs of arrays, tens of thousands of (reference, reference) pairs.
 * Now a set keeps it linear: the dependence pass takes 0.6 s here instead of 13 s.
 * expect-exit: 0
 * max-seconds: 8
 */
void many_pointers(int n, float *p0, float *p1, float *p2, float *p3, float *p4, float *p5, float *p6, float *p7, float *p8, float *p9, float *p10, float *p11, float *p12, float *p13, float *p14, float *p15, float *p16, float *p17, float *p18, float *p19, float *p20, float *p21, float *p22, float *p23, float *p24, float *p25, float *p26, float *p27, float *p28, float *p29, float *p30, float *p31, float *p32, float *p33, float *p34, float *p35, float *p36, float *p37, float *p38, float *p39, float *p40, float *p41, float *p42, float *p43, float *p44, float *p45, float *p46, float *p47, float *p48, float *p49, float *p50, float *p51, float *p52, float *p53, float *p54, float *p55, float *p56, float *p57, float *p58, float *p59)
{
    int i;
    for (i = 0; i < n; i++) {
        p0[i] = p1[i] + p7[i + 1];
        p1[i] = p2[i] + p8[i + 1];
        p2[i] = p3[i] + p9[i + 1];
        p3[i] = p4[i] + p10[i + 1];
        p4[i] = p5[i] + p11[i + 1];
        p5[i] = p6[i] + p12[i + 1];
        p6[i] = p7[i] + p13[i + 1];
        p7[i] = p8[i] + p14[i + 1];
        p8[i] = p9[i] + p15[i + 1];
        p9[i] = p10[i] + p16[i + 1];
        p10[i] = p11[i] + p17[i + 1];
        p11[i] = p12[i] + p18[i + 1];
        p12[i] = p13[i] + p19[i + 1];
        p13[i] = p14[i] + p20[i + 1];
        p14[i] = p15[i] + p21[i + 1];
        p15[i] = p16[i] + p22[i + 1];
        p16[i] = p17[i] + p23[i + 1];
        p17[i] = p18[i] + p24[i + 1];
        p18[i] = p19[i] + p25[i + 1];
        p19[i] = p20[i] + p26[i + 1];
        p20[i] = p21[i] + p27[i + 1];
        p21[i] = p22[i] + p28[i + 1];
        p22[i] = p23[i] + p29[i + 1];
        p23[i] = p24[i] + p30[i + 1];
        p24[i] = p25[i] + p31[i + 1];
        p25[i] = p26[i] + p32[i + 1];
        p26[i] = p27[i] + p33[i + 1];
        p27[i] = p28[i] + p34[i + 1];
        p28[i] = p29[i] + p35[i + 1];
        p29[i] = p30[i] + p36[i + 1];
        p30[i] = p31[i] + p37[i + 1];
        p31[i] = p32[i] + p38[i + 1];
        p32[i] = p33[i] + p39[i + 1];
        p33[i] = p34[i] + p40[i + 1];
        p34[i] = p35[i] + p41[i + 1];
        p35[i] = p36[i] + p42[i + 1];
        p36[i] = p37[i] + p43[i + 1];
        p37[i] = p38[i] + p44[i + 1];
        p38[i] = p39[i] + p45[i + 1];
        p39[i] = p40[i] + p46[i + 1];
        p40[i] = p41[i] + p47[i + 1];
        p41[i] = p42[i] + p48[i + 1];
        p42[i] = p43[i] + p49[i + 1];
        p43[i] = p44[i] + p50[i + 1];
        p44[i] = p45[i] + p51[i + 1];
        p45[i] = p46[i] + p52[i + 1];
        p46[i] = p47[i] + p53[i + 1];
        p47[i] = p48[i] + p54[i + 1];
        p48[i] = p49[i] + p55[i + 1];
        p49[i] = p50[i] + p56[i + 1];
        p50[i] = p51[i] + p57[i + 1];
        p51[i] = p52[i] + p58[i + 1];
        p52[i] = p53[i] + p59[i + 1];
        p53[i] = p54[i] + p0[i + 1];
        p54[i] = p55[i] + p1[i + 1];
        p55[i] = p56[i] + p2[i + 1];
        p56[i] = p57[i] + p3[i + 1];
        p57[i] = p58[i] + p4[i + 1];
        p58[i] = p59[i] + p5[i + 1];
        p59[i] = p0[i] + p6[i + 1];
    }
}
